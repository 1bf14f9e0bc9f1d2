package testenv

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// ThreadRuns sums how many times the scheduler has run this process's
// threads (/proc/self/task/TID/schedstat, third field): wake-ups and ends
// of preemptions. Tests that count what a change costs in wake-ups (the
// Go runtime's monitor thread's, say) compare it before and after.
func ThreadRuns(t testing.TB) int64 {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		if f := strings.Fields(string(b)); len(f) == 3 {
			r, _ := strconv.ParseInt(f[2], 10, 64)
			n += r
		}
	}
	return n
}
