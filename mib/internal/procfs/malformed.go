package procfs

import (
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The lines of kernel files the parsers could not read are counted per
// file, process-wide: the host MIBs serve the rest of the file, so a
// counter (and a warning in the log) is all that tells an operator that a
// kernel's format was not understood. tsnmpd serves the counters at
// /metrics as tsnmp_host_malformed_lines_total.

// badLog is how often a file's malformed lines are logged: at the first,
// and then at most once per interval with the count since.
const badLog = time.Hour

type badFile struct {
	lines  atomic.Uint64
	logged atomic.Int64 // UnixNano of the last warning; 0: none yet
	since  atomic.Uint64
}

var badFiles sync.Map // file name -> *badFile

// CountBad adds n malformed lines (or records) of file, a name such as
// "/proc/meminfo" or "/proc/PID/stat", to its counter, and logs a warning
// through slog's default logger the first time and at most once an hour
// after.
func CountBad(file string, n int) {
	if n <= 0 {
		return
	}
	v, ok := badFiles.Load(file)
	if !ok {
		v, _ = badFiles.LoadOrStore(file, new(badFile))
	}
	f := v.(*badFile)
	total := f.lines.Add(uint64(n))
	since := f.since.Add(uint64(n))
	now := time.Now().UnixNano()
	last := f.logged.Load()
	if last != 0 && now-last < int64(badLog) || !f.logged.CompareAndSwap(last, now) {
		return
	}
	f.since.Add(^(since - 1)) // less what this warning reports
	slog.Warn("host MIBs: lines of a kernel file could not be read and were left out of the tables; the file's format may be newer than tsnmpd knows",
		"file", file, "lines", since, "total", total)
}

// BadLines returns the malformed lines counted for file.
func BadLines(file string) uint64 {
	if v, ok := badFiles.Load(file); ok {
		return v.(*badFile).lines.Load()
	}
	return 0
}

// AppendMetrics appends the malformed-line counters to b in the
// Prometheus text format, one series per file that had any.
func AppendMetrics(b []byte) []byte {
	var files []string
	badFiles.Range(func(k, _ any) bool {
		files = append(files, k.(string))
		return true
	})
	b = append(b, "# HELP tsnmp_host_malformed_lines_total Lines of kernel files (/proc, /sys) the host MIBs could not read and left out.\n# TYPE tsnmp_host_malformed_lines_total counter\n"...)
	slices.Sort(files)
	for _, f := range files {
		b = append(b, `tsnmp_host_malformed_lines_total{file=`...)
		b = strconv.AppendQuote(b, f)
		b = append(b, "} "...)
		b = strconv.AppendUint(b, BadLines(f), 10)
		b = append(b, '\n')
	}
	return b
}
