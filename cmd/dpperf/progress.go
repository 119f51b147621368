package main

import (
	"fmt"
	"io"
)

// statusLine returns a function that shows a message on one line of
// stderr, each replacing the last, and one that clears the line. Progress
// is for a person watching: when stderr is not a terminal (a pipe, a CI
// log, a file) both do nothing.
func statusLine(stderr io.Writer) (show func(msg string), done func()) {
	if !isTerminal(stderr) {
		return nil, func() {}
	}
	return func(msg string) { fmt.Fprintf(stderr, "\r\033[K%s", msg) },
		func() { fmt.Fprint(stderr, "\r\033[K") }
}
