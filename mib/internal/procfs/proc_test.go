package procfs

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestKeepOpenLimitCmdline: the limit counts the cmdline files kept
// besides the stat files, and the processes past it have their command
// lines read by opening their files, the same as a reader that keeps
// nothing open reads them.
func TestKeepOpenLimitCmdline(t *testing.T) {
	old := maxKept
	maxKept = func() int { return 3 }
	defer func() { maxKept = old }()
	pr := ProcReader{FS: Host, WithCmdline: true, KeepOpen: true}
	defer pr.Close()
	all := ProcReader{FS: Host, WithCmdline: true}
	for range 2 {
		ps, _, err := pr.List()
		if err != nil {
			t.Fatal(err)
		}
		ref, _, _ := all.List()
		n := 0
		for _, k := range pr.kept {
			n++
			if k.cmd >= 0 {
				n++
			}
		}
		if n != pr.nkept || n > 3 {
			t.Errorf("%d descriptors kept open (counted %d), limit 3", n, pr.nkept)
		}
		same := 0
		for i := range ps {
			j, ok := slices.BinarySearchFunc(ref, ps[i].PID, func(p Process, pid uint32) int { return int(p.PID) - int(pid) })
			if ok && ref[j].Start == ps[i].Start && string(pr.Cmdline(&ps[i])) == string(ref[j].Cmdline) {
				same++
			}
		}
		if same < len(ps)-5 || len(ps) < 3 {
			t.Errorf("%d of %d processes have the command line a reader keeping nothing open reads", same, len(ps))
		}
	}
}

// BenchmarkCmdlineRead reads every user process's /proc/PID/cmdline
// once per op, by opening it (open, read, read to the end, close) and
// through a descriptor kept open (one pread), beside a pread of each
// kept /proc/PID/stat for scale.
//
//	go test -run '^$' -bench CmdlineRead ./mib/internal/procfs
func BenchmarkCmdlineRead(b *testing.B) {
	pr := ProcReader{FS: Host, WithCmdline: true}
	ps, _, err := pr.List()
	if err != nil {
		b.Fatal(err)
	}
	var pids []uint32
	for _, p := range ps {
		if len(p.Cmdline) > 0 {
			pids = append(pids, p.PID)
		}
	}
	open := func(file string) []int {
		var fds []int
		for _, pid := range pids {
			if fd, ok := pr.open(pid, file); ok {
				fds = append(fds, fd)
			}
		}
		b.Cleanup(func() {
			for _, fd := range fds {
				unix.Close(fd)
			}
		})
		return fds
	}
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			for _, pid := range pids {
				pr.read(pid, "/cmdline")
			}
		}
		b.ReportMetric(float64(len(pids)), "processes")
	})
	b.Run("pread", func(b *testing.B) {
		fds := open("/cmdline")
		for b.Loop() {
			for _, fd := range fds {
				preadAll(fd, pr.buf)
			}
		}
		b.ReportMetric(float64(len(fds)), "processes")
	})
	b.Run("stat", func(b *testing.B) {
		fds := open("/stat")
		for b.Loop() {
			for _, fd := range fds {
				preadAll(fd, pr.buf)
			}
		}
		b.ReportMetric(float64(len(fds)), "processes")
	})
}

// BenchmarkListCmdline lists the processes as the shared listing does,
// alone and with every process's command line asked for twice
// (hrSWRunPath, hrSWRunParameters) after each listing: the cost of
// reading command lines again once per listing.
//
//	go test -run '^$' -bench ListCmdline ./mib/internal/procfs
func BenchmarkListCmdline(b *testing.B) {
	for _, ask := range []bool{false, true} {
		name := "list"
		if ask {
			name = "list+cmdline"
		}
		b.Run(name, func(b *testing.B) {
			pr := ProcReader{FS: Host, WithCmdline: true, KeepOpen: true}
			defer pr.Close()
			n := 0
			for b.Loop() {
				ps, _, _ := pr.List()
				n = len(ps)
				if ask {
					for i := range ps {
						pr.Cmdline(&ps[i])
						pr.Cmdline(&ps[i])
					}
				}
			}
			b.ReportMetric(float64(n), "processes")
		})
	}
}
