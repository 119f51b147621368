//go:build !linux

package record

import (
	"errors"
	"time"
)

func raisePriority() (func(), error) {
	return nil, errors.New("not supported on this system")
}

func sleep(d time.Duration) { time.Sleep(d) }
