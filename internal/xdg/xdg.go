// Package xdg locates tsnmp's directories by the XDG base directory
// specification.
package xdg

import (
	"fmt"
	"os"
	"path/filepath"
)

// CacheDir is where managers keep resumption state: $XDG_CACHE_HOME/tsnmp,
// else ~/.cache/tsnmp.
func CacheDir() (string, error) { return dir("XDG_CACHE_HOME", ".cache") }

// StateDir is the agent's default state directory: $XDG_STATE_HOME/tsnmp,
// else ~/.local/state/tsnmp.
func StateDir() (string, error) { return dir("XDG_STATE_HOME", ".local", "state") }

func dir(env string, home ...string) (string, error) {
	if d := os.Getenv(env); d != "" {
		return filepath.Join(d, "tsnmp"), nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory to put tsnmp's files in; set $%s: %w", env, err)
	}
	return filepath.Join(append(append([]string{h}, home...), "tsnmp")...), nil
}
