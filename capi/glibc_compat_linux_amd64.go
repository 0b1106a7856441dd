package main

// glibc_compat_linux_amd64.c binds the pthread functions to their GLIBC_2.2.5
// versions, which glibc before 2.34 defines in libpthread.so.0: the library
// names it as needed (since glibc 2.34 an empty stub), so that it is loaded
// wherever the library is.

// #cgo LDFLAGS: -Wl,--push-state,--no-as-needed -l:libpthread.so.0 -Wl,--pop-state
import "C"
