//go:build unix && !linux

package testserver

import "syscall"

// groupAlive reports whether a process of group pgid still exists (zombies included).
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}
