//go:build !linux

package pluginhost

import "os/exec"

// orphanGuard: only Linux can tie a child's life to its parent's.
func orphanGuard(*exec.Cmd) {}
