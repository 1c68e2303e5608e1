//go:build linux

package testserver

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// groupAlive reports whether a process of group pgid is still running. Zombies do not count: an
// orphaned child is reaped by init whenever init gets to it, but it has already released its files,
// locks and ports.
func groupAlive(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid pgrp ...
		end := bytes.LastIndexByte(data, ')')
		if end < 0 {
			continue
		}
		fields := bytes.Fields(data[end+1:])
		if len(fields) < 3 {
			continue
		}
		if pgrp, err := strconv.Atoi(string(fields[2])); err == nil && pgrp == pgid && string(fields[0]) != "Z" {
			return true
		}
	}
	return false
}
