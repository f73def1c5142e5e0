package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

const versionDoc = `Prints the module version agentstream was built from and, when the build
recorded it, the VCS commit (with "modified" when the work tree had changes)
and its time. A binary built inside a checkout without a tag shows the
version Go derived from the commit, or "devel" when it derived none.`

func cmdVersion(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "version", "", versionDoc)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(e.stderr, "agentstream version: no arguments expected")
		return exitUsage
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, versionLine(bi))
	return exitOK
}

// versionLine describes a build: "agentstream v0.4.0 (commit 1a2b3c4d5e6f,
// 2026-12-01T20:52:42Z) go1.26.8 linux/amd64". bi may be nil (a binary
// built without module support).
func versionLine(bi *debug.BuildInfo) string {
	version := "devel"
	var commit, when string
	modified := false
	goVersion := runtime.Version()
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if commit == "" {
		commit = pseudoCommit(version)
	}
	var b strings.Builder
	b.WriteString("agentstream ")
	b.WriteString(version)
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		b.WriteString(" (commit ")
		b.WriteString(commit)
		if when != "" {
			b.WriteString(", " + when)
		}
		if modified {
			b.WriteString(", modified")
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " %s %s/%s", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// pseudoCommit returns the commit a pseudo-version names
// (v0.0.0-20261202024649-be52d2d6de1b: what go install gives a module
// built from a commit, which records no VCS settings), else "".
func pseudoCommit(version string) string {
	version, _, _ = strings.Cut(version, "+")
	parts := strings.Split(version, "-")
	if len(parts) < 3 {
		return ""
	}
	rev, stamp := parts[len(parts)-1], parts[len(parts)-2]
	if i := strings.LastIndexByte(stamp, '.'); i >= 0 {
		stamp = stamp[i+1:]
	}
	if len(rev) != 12 || len(stamp) != 14 || strings.Trim(rev, "0123456789abcdef") != "" || strings.Trim(stamp, "0123456789") != "" {
		return ""
	}
	return rev
}
