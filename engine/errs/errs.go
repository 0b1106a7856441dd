// Package errs holds the engine's error classes. Engine packages wrap one of
// these sentinels (fmt.Errorf("...: %w", errs.ErrIO)) so that a caller, the C
// API above all, can tell what kind of failure an error is with errors.Is and
// map it to a status code, without parsing messages.
//
// An error that wraps none of them is an invalid argument or invalid data.
// Error (Errorf) is an error with a message of its own that wraps a class.
//
// It imports nothing of the engine: it is its lowest layer (engine/layering_test.go).
package errs

import (
	"errors"
	"fmt"
)

var (
	// ErrIO: a file could not be read or written, or its contents changed or
	// vanished under an open graph (a truncated memory map, a failed
	// checksum).
	ErrIO = errors.New("i/o error")
	// ErrNoMem: an allocation failed or would exceed what the machine has.
	ErrNoMem = errors.New("out of memory")
	// ErrState: the call is valid but not in the object's current state
	// (replacing node data that an open loader reads, a second iterator).
	ErrState = errors.New("invalid state")
	// ErrClosed: the object was closed (before or during the call).
	ErrClosed = errors.New("closed")
	// ErrNotSupported: valid, but this build or backend cannot do it.
	ErrNotSupported = errors.New("not supported")
	// ErrType: a buffer has the wrong element type, device or layout.
	ErrType = errors.New("wrong type")
)

// Error is an error with a message of its own that wraps one of the
// classes above (Class; nil for an invalid argument) and optionally the
// error that caused it (Cause), without repeating their text in its
// message.
type Error struct {
	Msg   string
	Class error
	Cause error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns Class and Cause, those that are set.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Class != nil {
		out = append(out, e.Class)
	}
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	return out
}

// Errorf returns an *Error of class (nil: an invalid argument) whose
// message is format applied to args.
func Errorf(class error, format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...), Class: class}
}
