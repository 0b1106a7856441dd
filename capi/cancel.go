package main

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"sync"
	"time"
	"unsafe"
)

// cancelPoll is how often a cancellable call looks at its token's flag.
const cancelPoll = 2 * time.Millisecond

// callContext returns the context of a cancellable call (see gf_cancel in
// the header) and the function that ends it, to be deferred. The calling
// thread's gf_cancel token (read here: a C->Go call runs on the caller's
// thread) is polled by a goroutine that cancels the context when the flag
// is set; the end function stops the goroutine before returning, so that
// the caller may free the token as soon as the call returned. Without a
// token the context is Background and nothing runs.
func callContext() (context.Context, func()) {
	tok := C.gf__cancel_current()
	if tok == nil {
		return context.Background(), func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if C.gf__cancel_flag(tok) != 0 {
		cancel()
		return ctx, func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func(tok unsafe.Pointer) {
		defer wg.Done()
		t := time.NewTicker(cancelPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if C.gf__cancel_flag(tok) != 0 {
					cancel()
					return
				}
			}
		}
	}(tok)
	return ctx, func() {
		close(done)
		wg.Wait()
		cancel()
	}
}

// cancelled returns err as GF_ECANCELED when it stems from ctx's
// cancellation, else err.
func cancelled(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errorf(gfECanceled, "cancelled through the calling thread's gf_cancel token")
	}
	return err
}
