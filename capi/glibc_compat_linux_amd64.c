// Oldest symbol versions of the pthread functions, so that the library loads
// on glibc 2.28 (manylinux_2_28, as torch's wheels), whatever glibc it was
// linked against.
//
// glibc 2.34 moved libpthread into libc and gave these functions new default
// versions (GLIBC_2.34; pthread_sigmask and pthread_getattr_np GLIBC_2.32):
// linked on a newer glibc, every unversioned reference binds to those, and
// the library would not load where they do not exist. The Go runtime's cgo
// code (runtime/cgo) and ours call them; here each one is defined with
// hidden visibility, so that every reference inside the library resolves to
// this definition at link time (an object's definition comes before a shared
// library's) and nothing is exported, and each calls glibc's GLIBC_2.2.5
// version, which every glibc from 2.2.5 on defines (before 2.34 in
// libpthread.so.0, and dlsym, which the CUDA library calls, in libdl.so.2:
// the library names both as needed; since 2.34 empty stubs). python/tools/wheeltag.py names the manylinux tag the
// libraries' symbol versions allow; tests/python/test_packaging.py checks
// that none is newer than 2.28.
//
// Plain prototypes (no pthread.h): the types only pass through.

#define GF_HIDDEN __attribute__((visibility("hidden")))
#define GF_OLDEST(name) __asm__(".symver gf_glibc_" #name "," #name "@GLIBC_2.2.5")

typedef unsigned long gf_pthread_t;

int gf_glibc_pthread_create(gf_pthread_t *, const void *, void *(*)(void *), void *);
GF_OLDEST(pthread_create);
GF_HIDDEN int pthread_create(gf_pthread_t *t, const void *attr, void *(*fn)(void *), void *arg) {
	return gf_glibc_pthread_create(t, attr, fn, arg);
}

int gf_glibc_pthread_sigmask(int, const void *, void *);
GF_OLDEST(pthread_sigmask);
GF_HIDDEN int pthread_sigmask(int how, const void *set, void *old) {
	return gf_glibc_pthread_sigmask(how, set, old);
}

int gf_glibc_pthread_getattr_np(gf_pthread_t, void *);
GF_OLDEST(pthread_getattr_np);
GF_HIDDEN int pthread_getattr_np(gf_pthread_t t, void *attr) {
	return gf_glibc_pthread_getattr_np(t, attr);
}

int gf_glibc_pthread_attr_getstack(const void *, void **, unsigned long *);
GF_OLDEST(pthread_attr_getstack);
GF_HIDDEN int pthread_attr_getstack(const void *attr, void **addr, unsigned long *size) {
	return gf_glibc_pthread_attr_getstack(attr, addr, size);
}

int gf_glibc_pthread_attr_getstacksize(const void *, unsigned long *);
GF_OLDEST(pthread_attr_getstacksize);
GF_HIDDEN int pthread_attr_getstacksize(const void *attr, unsigned long *size) {
	return gf_glibc_pthread_attr_getstacksize(attr, size);
}

int gf_glibc_pthread_key_create(unsigned int *, void (*)(void *));
GF_OLDEST(pthread_key_create);
GF_HIDDEN int pthread_key_create(unsigned int *key, void (*destructor)(void *)) {
	return gf_glibc_pthread_key_create(key, destructor);
}

int gf_glibc_pthread_once(int *, void (*)(void));
GF_OLDEST(pthread_once);
GF_HIDDEN int pthread_once(int *once, void (*fn)(void)) {
	return gf_glibc_pthread_once(once, fn);
}

int gf_glibc_pthread_setspecific(unsigned int, const void *);
GF_OLDEST(pthread_setspecific);
GF_HIDDEN int pthread_setspecific(unsigned int key, const void *value) {
	return gf_glibc_pthread_setspecific(key, value);
}

void *gf_glibc_dlsym(void *, const char *);
GF_OLDEST(dlsym);
GF_HIDDEN void *dlsym(void *handle, const char *symbol) {
	return gf_glibc_dlsym(handle, symbol);
}
