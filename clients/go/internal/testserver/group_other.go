//go:build !unix

package testserver

import (
	"os"
	"os/exec"
	"time"
)

// terminateSignal is os.Kill: other systems cannot ask a process to shut down gracefully.
var terminateSignal = os.Kill

// newProcessGroup leaves cmd as is: without Unix process groups only the direct child is stopped.
func newProcessGroup(cmd *exec.Cmd) {}

// stopProcessGroup kills leader and waits up to stopGrace for it to exit (exited yields its Wait
// result, or is closed).
func stopProcessGroup(leader *os.Process, exited <-chan error) {
	_ = leader.Kill()
	select {
	case <-exited:
	case <-time.After(stopGrace):
	}
}

// killProcessGroup kills leader and waits up to stopGrace for it to exit.
func killProcessGroup(leader *os.Process, exited <-chan error) {
	stopProcessGroup(leader, exited)
}
