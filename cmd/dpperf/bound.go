package main

import (
	"context"
	"errors"
	"io"
)

func runBound(_ context.Context, _ []string, _, _ io.Writer) error {
	return errors.New("bound: not built yet")
}

func runTargets(_ context.Context, _ []string, _, _ io.Writer) error {
	return errors.New("targets: not built yet")
}
