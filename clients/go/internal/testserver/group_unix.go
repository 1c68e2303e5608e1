//go:build unix

package testserver

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// terminateSignal asks a process to shut down gracefully.
var terminateSignal os.Signal = syscall.SIGTERM

// newProcessGroup makes cmd the leader of a new process group, so that stopping it also stops the
// processes it starts (npm starts node, which may start more).
func newProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// stopProcessGroup sends SIGTERM to the process group led by leader and waits up to stopGrace for
// the leader to exit (exited yields its Wait result, or is closed) and for the group to empty; then it
// sends SIGKILL to whatever remains.
func stopProcessGroup(leader *os.Process, exited <-chan error) {
	pgid := leader.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.After(stopGrace)
	select {
	case <-exited:
		for groupAlive(pgid) {
			select {
			case <-deadline:
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	case <-deadline:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-exited:
		case <-time.After(stopGrace):
		}
	}
}

// killProcessGroup sends SIGKILL to the process group led by leader, as a crash would, and waits up
// to stopGrace for the leader to exit and the group to empty.
func killProcessGroup(leader *os.Process, exited <-chan error) {
	pgid := leader.Pid
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	deadline := time.After(stopGrace)
	select {
	case <-exited:
	case <-deadline:
		return
	}
	for groupAlive(pgid) {
		select {
		case <-deadline:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
