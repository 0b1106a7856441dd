package core

import (
	"fmt"

	"github.com/graphferry/graphferry/engine/errs"
)

// classError is an error with a message of its own that wraps one of the
// engine's error classes (errs.ErrState, ...), and optionally the error that
// caused it, without repeating their text in the message.
type classError struct {
	msg   string
	class error // an errs class, or nil for an invalid argument
	cause error // may be nil
}

func (e *classError) Error() string { return e.msg }

func (e *classError) Unwrap() []error {
	var out []error
	if e.class != nil {
		out = append(out, e.class)
	}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	return out
}

// ErrGraphClosed is returned by every call on a Graph after Close (and by a
// call that Close overtook before it took its reference). It wraps
// errs.ErrClosed.
var ErrGraphClosed error = &classError{msg: "graph was closed", class: errs.ErrClosed}

// ErrLoaderClosed is returned by calls on a closed Loader. It wraps
// errs.ErrClosed.
var ErrLoaderClosed error = &classError{msg: "loader was closed", class: errs.ErrClosed}

// ErrNotStarted is returned by Loader.Next before the first Loader.Start. It
// wraps errs.ErrState.
var ErrNotStarted error = &classError{msg: "no epoch was started: call Start first", class: errs.ErrState}

// errorf returns a classError of class (nil: an invalid argument).
func errorf(class error, format string, args ...any) error {
	return &classError{msg: fmt.Sprintf(format, args...), class: class}
}
