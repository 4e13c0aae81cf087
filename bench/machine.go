package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// machineFacts describes where the numbers were measured.
func machineFacts(ctx context.Context, c *config) [][2]string {
	facts := [][2]string{
		{"date", time.Now().UTC().Format("2006-01-02 15:04 MST")},
		{"CPU", fmt.Sprintf("%s, %d cores (nproc)", cpuModel(), runtime.NumCPU())},
		{"memory", memTotal()},
		{"OS", fmt.Sprintf("%s/%s, kernel %s", runtime.GOOS, runtime.GOARCH, readTrim("/proc/sys/kernel/osrelease"))},
		{"disk", fsType(c.DataDir) + " (input and scratch under " + c.rel(c.DataDir) + ")"},
		{"Go", commandLine(ctx, c.root, "go", "version")},
		{"DuckDB", commandLine(ctx, c.root, c.bin.duckdb, "-version") + " (duckdb-go " + duckdbGoVersion(ctx, c.root) + ")"},
	}
	tm := "not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr))
	if c.bin.tidemark != "" {
		tm = strings.ReplaceAll(commandLine(ctx, c.root, c.bin.tidemark, "version"), "\n", "; ")
	}
	facts = append(facts, [2]string{"tidemark", tm})
	if rev := commandLine(ctx, c.root, "git", "rev-parse", "--short", "HEAD"); rev != "" {
		facts = append(facts, [2]string{"commit", rev + " (plus any uncommitted changes in the working tree)"})
	}
	return facts
}

func commandLine(ctx context.Context, dir, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func duckdbGoVersion(ctx context.Context, root string) string {
	v := commandLine(ctx, root, "go", "list", "-m", "-f", "{{.Version}}", "github.com/duckdb/duckdb-go/v2")
	if v == "" {
		return "unknown"
	}
	return v
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func memTotal() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "unknown"
}

// fsType names the filesystem a folder is on.
func fsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	names := map[int64]string{
		0xEF53: "ext4", 0x58465342: "xfs", 0x9123683E: "btrfs", 0x01021994: "tmpfs",
		0x794c7630: "overlayfs", 0x2FC12FC1: "zfs", 0x6969: "nfs", 0x65735546: "fuse",
	}
	name, ok := names[int64(st.Type)]
	if !ok {
		name = fmt.Sprintf("filesystem 0x%x", st.Type)
	}
	return fmt.Sprintf("%s, %.0f GB free", name, float64(st.Bavail)*float64(st.Bsize)/1e9)
}

func readTrim(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
