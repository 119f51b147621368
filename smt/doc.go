// Package smt talks SMT-LIB2 to a solver process over a pipe: one
// persistent process per Solver (Z3 by default; any solver that reads
// SMT-LIB2 on stdin, such as cvc5, can be configured), incremental
// push/pop, a timeout per query that turns a slow query into Unknown, and
// reading values out of a model. With Z3, definitions are held back until
// a command uses them (lazy.go), scoped by push and pop, so that a long
// path's unused definitions never reach the solver. Terms can also be
// evaluated in a model in Go (Eval, with a Model asking the solver only for
// the values of free symbols), which saves a round trip per term.
package smt
