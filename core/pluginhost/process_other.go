//go:build !linux

package pluginhost

import (
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

// orphanGuard: only Linux can tie a child's life to its parent's.
func orphanGuard(*exec.Cmd) {}

// pidAlive reports whether a process with this id exists, as far as
// signal 0 can tell.
func pidAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	defer p.Release()
	return p.Signal(syscall.Signal(0)) == nil
}

// inode is the file's inode number: a file renamed into place has a new
// one even when its size and time match the old.
func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
