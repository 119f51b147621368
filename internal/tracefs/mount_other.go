//go:build !linux

package tracefs

import "errors"

func mount(string) error { return errors.New("tracefs exists only on Linux") }
