package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// touchPages is how many pages pageTouchCost touches in each pass.
const touchPages = 1024

// pageTouchCost returns what reading one byte of each of touchPages
// resident pages costs this machine per page, after a pause of gap (the
// median of passes passes) and right after the pass before (the median
// of as many). The pages are small ones (MADV_NOHUGEPAGE) of a mapping
// of their own, out of the garbage collector's way.
//
// Each page a process touches needs a translation of its address (a TLB
// entry), which the processor fills by walking the page tables; after a
// pause in which other work ran on the processor, and on a virtual
// machine whose hypervisor rebuilds page tables of its own as the guest
// touches memory (nested virtualization, shadow paging), that walk can
// cost thousands of times a read from the cache. A walk of an agent
// touches about a thousand of its pages (pagesTouched), so where the
// cost after a pause is large, it is a large part of every walk of every
// agent, and the ratios of their times draw towards 1.
func pageTouchCost(gap time.Duration, passes int) (cold, warm time.Duration, err error) {
	size := touchPages * os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return 0, 0, fmt.Errorf("bench: map %d pages: %w", touchPages, err)
	}
	defer unix.Munmap(mem)
	unix.Madvise(mem, unix.MADV_NOHUGEPAGE) // where the kernel has none, small pages anyway
	for i := range mem {
		mem[i] = byte(i)
	}
	var colds, warms []time.Duration
	// pass reads byte off of every page (the byte at offset p holds byte(p)),
	// and checks the sum of what it read, so that the reads are made.
	pass := func(off int) (time.Duration, error) {
		var sum, want byte
		t := time.Now()
		for p := 0; p < size; p += os.Getpagesize() {
			sum += mem[p+off]
		}
		d := time.Since(t) / touchPages
		for p := 0; p < size; p += os.Getpagesize() {
			want += byte(p + off)
		}
		if sum != want {
			return 0, fmt.Errorf("bench: %d pages read back a sum of %d, not %d", touchPages, sum, want)
		}
		return d, nil
	}
	for i := range passes {
		time.Sleep(gap)
		// Another line of each page at each pass: the processor's caches
		// hold none of them.
		c, err := pass((2 * i * 64) % os.Getpagesize())
		if err != nil {
			return 0, 0, err
		}
		w, err := pass((2*i*64 + 64) % os.Getpagesize())
		if err != nil {
			return 0, 0, err
		}
		colds, warms = append(colds, c), append(warms, w)
	}
	slices.Sort(colds)
	slices.Sort(warms)
	return colds[len(colds)/2], warms[len(warms)/2], nil
}

// touchProbe is pageTouchCost at the start of an experiment and at its
// end.
type touchProbe struct {
	gap        time.Duration
	passes     int
	cold, warm time.Duration // at the start
}

// newTouchProbe takes the first pageTouchCost of a probe.
func newTouchProbe(gap time.Duration, passes int) (*touchProbe, error) {
	p := &touchProbe{gap: gap, passes: passes}
	var err error
	p.cold, p.warm, err = pageTouchCost(gap, passes)
	return p, err
}

// note takes the probe's second pageTouchCost and returns the report's
// note of both.
func (p *touchProbe) note() string {
	end := "at its end not measured"
	if cold, warm, err := pageTouchCost(p.gap, p.passes); err != nil {
		end += " (" + err.Error() + ")"
	} else {
		end = fmt.Sprintf("at its end %v and %v", cold, warm)
	}
	return fmt.Sprintf("This machine's memory: reading one byte of a resident %d KiB page took, at the start of the run, %v after a pause of %v and %v right after, %s (medians of %d passes over %d pages of the benchmark's own). A walk touches hundreds to thousands of pages of its agent (the column of pages touched), and of the kernel and the manager besides: where the first figure is large, every walk of every agent carries a cost of the machine's that grows with the pages it touches, not with its work, and the ratios of the agents' times draw towards 1.",
		os.Getpagesize()/1024, p.cold, p.gap, p.warm, end, p.passes, touchPages)
}

// touched is how many kilobytes of its memory a process touched, by
// kind. smaps counts a huge page touched as all of its kilobytes.
type touched struct {
	code, rodata, other int // kB: executable mappings, other read-only ones, the rest
}

func (t touched) pages() int { return (t.code + t.rodata + t.other) * 1024 / os.Getpagesize() }

func (t touched) String() string {
	return fmt.Sprintf("%d (code %d, read-only data %d, other %d)", t.pages(), t.code*1024/os.Getpagesize(), t.rodata*1024/os.Getpagesize(), t.other*1024/os.Getpagesize())
}

// pagesTouched returns the memory of process pid that fn made it touch:
// it clears the process's referenced bits (/proc/PID/clear_refs), runs
// fn, and sums the Referenced lines of /proc/PID/smaps. Pages the process
// shares with others (a library's code) count when it touched them.
// Clearing the bits walks the process's page tables: the caller times
// fn, not pagesTouched.
func pagesTouched(pid int, fn func() error) (touched, error) {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("1"), 0); err != nil {
		return touched{}, fmt.Errorf("bench: clear the referenced bits of process %d: %w", pid, err)
	}
	if err := fn(); err != nil {
		return touched{}, err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return touched{}, err
	}
	return parseSmapsReferenced(b)
}

// parseSmapsReferenced sums the Referenced lines of /proc/PID/smaps by the
// permissions of their mappings.
func parseSmapsReferenced(b []byte) (touched, error) {
	var t touched
	perms := []byte("----")
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		f := bytes.Fields(line)
		if len(f) >= 2 && bytes.IndexByte(f[0], '-') > 0 && !bytes.HasSuffix(f[0], []byte(":")) {
			if len(f[1]) != 4 {
				return t, fmt.Errorf("bench: smaps: mapping line %q", line)
			}
			perms = f[1]
			continue
		}
		if len(f) != 3 || string(f[0]) != "Referenced:" {
			continue
		}
		kb, err := strconv.Atoi(string(f[1]))
		if err != nil {
			return t, fmt.Errorf("bench: smaps: %q", line)
		}
		switch {
		case perms[2] == 'x':
			t.code += kb
		case perms[1] == '-':
			t.rodata += kb
		default:
			t.other += kb
		}
	}
	return t, sc.Err()
}
