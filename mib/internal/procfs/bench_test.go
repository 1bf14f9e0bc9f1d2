package procfs

import "testing"

// BenchmarkProcList reads every process's stat and command line once.
func BenchmarkProcList(b *testing.B) {
	pr := ProcReader{FS: Host, WithCmdline: true}
	n := 0
	for b.Loop() {
		ps, _, _ := pr.List()
		n = len(ps)
	}
	b.ReportMetric(float64(n), "processes")
}

// BenchmarkProcListKeepOpen reads them as the shared listing does, the
// stat files kept open between listings.
func BenchmarkProcListKeepOpen(b *testing.B) {
	pr := ProcReader{FS: Host, WithCmdline: true, KeepOpen: true}
	defer pr.Close()
	n := 0
	for b.Loop() {
		ps, _, _ := pr.List()
		n = len(ps)
	}
	b.ReportMetric(float64(n), "processes")
}

// BenchmarkMounts lists the mounted file systems with their usage.
func BenchmarkMounts(b *testing.B) {
	var m Mounts
	m.FS = Host
	for b.Loop() {
		m.List(nil)
	}
}
