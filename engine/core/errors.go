package core

import (
	"github.com/graphferry/graphferry/engine/errs"
)

// ErrGraphClosed is returned by every call on a Graph after Close (and by a
// call that Close overtook before it took its reference). It wraps
// errs.ErrClosed.
var ErrGraphClosed error = &errs.Error{Msg: "graph was closed", Class: errs.ErrClosed}

// ErrLoaderClosed is returned by calls on a closed Loader. It wraps
// errs.ErrClosed.
var ErrLoaderClosed error = &errs.Error{Msg: "loader was closed", Class: errs.ErrClosed}

// ErrClosedWhileWaiting is returned by a Loader.Next that Close, called from
// another goroutine, ended while it waited for a batch. It wraps
// errs.ErrClosed.
var ErrClosedWhileWaiting error = &errs.Error{Msg: "loader was closed while Next waited for a batch", Class: errs.ErrClosed}

// ErrNotStarted is returned by Loader.Next before the first Loader.Start. It
// wraps errs.ErrState.
var ErrNotStarted error = &errs.Error{Msg: "no epoch was started: call Start first", Class: errs.ErrState}

// errorf returns an error of class (nil: an invalid argument) with a
// message of its own (errs.Errorf).
func errorf(class error, format string, args ...any) error {
	return errs.Errorf(class, format, args...)
}
