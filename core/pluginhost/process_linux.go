package pluginhost

import (
	"errors"
	"io/fs"
	"os/exec"
	"syscall"
)

// orphanGuard asks the kernel to kill the plugin when the server dies
// without stopping it (a crash, SIGKILL): go-plugin children outlive their
// parent otherwise. Strictly the signal follows the OS thread that started
// the process; Go keeps its threads for the life of the process (short of
// a goroutine exiting while locked to one), and were one to go, the
// supervisor restarts the plugin like after any crash.
func orphanGuard(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// pidAlive reports whether a process with this id exists (EPERM: it
// exists, under another user).
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// inode is the file's inode number: a file renamed into place has a new
// one even when its size and time match the old.
func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
