package main

// glibc_compat_linux_amd64.c binds the pthread functions and dlsym to their
// GLIBC_2.2.5 versions, which glibc before 2.34 defines in libpthread.so.0
// and libdl.so.2: the library names them as needed (since glibc 2.34 empty
// stubs), so that they are loaded wherever the library is.

// #cgo LDFLAGS: -Wl,--push-state,--no-as-needed -l:libpthread.so.0 -l:libdl.so.2 -Wl,--pop-state
import "C"
