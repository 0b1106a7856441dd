// Package bounds is the one source of the bounds that the counts, sizes
// and fractions a caller passes are checked against (issue 34): a thread
// count against the host's cores (Threads), an allocation against the
// memory this process may use (Alloc: the machine's memory, its cgroup's
// limit, less what the process holds), a fraction against its interval
// (Fraction). The engine's option validation calls them; the C API only
// converts. Each error says the bound and what it is, and wraps
// errs.ErrNoMem for memory (an invalid argument otherwise), so that a huge
// value is an error with nothing lost, never a process killed for memory
// or aborted by the Go runtime.
//
// It imports only errs (engine/layering_test.go).
package bounds
