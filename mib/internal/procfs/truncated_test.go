package procfs

import (
	"bytes"
	"reflect"
	"testing"
)

// strayFields counts the uint64 fields of the structs got and full (of
// one type, nested structs included) where got holds neither full's value
// nor zero: values only a truncated last line can have given.
func strayFields(got, full reflect.Value) int {
	n := 0
	for i := range got.NumField() {
		g, f := got.Field(i), full.Field(i)
		switch g.Kind() {
		case reflect.Uint64:
			if g.Uint() != 0 && g.Uint() != f.Uint() {
				n++
			}
		case reflect.Struct:
			n += strayFields(g, f)
		}
	}
	return n
}

// TestTruncatedLosesLastLine cuts each sample at every byte: what the
// complete lines before the cut say is read as from the whole file, and
// the partial line costs that line alone (at most one stray value, or one
// row fewer or cut short).
func TestTruncatedLosesLastLine(t *testing.T) {
	fullMem := ParseMeminfo(sample(t, "meminfo"))
	fullVM := ParseVmstat(sample(t, "vmstat"))
	fullStat := ParseStat(sample(t, "stat"))
	fullDisks, _ := ParseDiskstats(sample(t, "diskstats"))
	fullMounts, _ := ParseMounts(sample(t, "mounts"))
	fullCPUs := ParseCPUInfo(sample(t, "cpuinfo"))
	for _, c := range []struct {
		name  string
		check func(prefix []byte, complete int) // complete: lines ended by '\n'
	}{
		{"meminfo", func(b []byte, _ int) {
			if n := strayFields(reflect.ValueOf(ParseMeminfo(b)), reflect.ValueOf(fullMem)); n > 1 {
				t.Fatalf("meminfo cut at %d: %d values differ from the whole file's", len(b), n)
			}
		}},
		{"vmstat", func(b []byte, _ int) {
			if n := strayFields(reflect.ValueOf(ParseVmstat(b)), reflect.ValueOf(fullVM)); n > 1 {
				t.Fatalf("vmstat cut at %d: %d values differ from the whole file's", len(b), n)
			}
		}},
		{"stat", func(b []byte, _ int) {
			s := ParseStat(b)
			if len(s.CPUs) > len(fullStat.CPUs) {
				t.Fatalf("stat cut at %d: %d CPUs, the whole file %d", len(b), len(s.CPUs), len(fullStat.CPUs))
			}
			stray := 0
			for i, c := range s.CPUs {
				if !reflect.DeepEqual(c, fullStat.CPUs[i]) {
					stray++
				}
			}
			s.CPUs, s.Bad = nil, 0
			full := fullStat
			full.CPUs, full.Bad = nil, 0
			if stray += strayFields(reflect.ValueOf(s), reflect.ValueOf(full)); stray > 1 {
				t.Fatalf("stat cut at %d: %d values differ from the whole file's", len(b), stray)
			}
		}},
		{"diskstats", func(b []byte, complete int) {
			ds, _ := ParseDiskstats(b)
			if len(ds) < complete || len(ds) > complete+1 {
				t.Fatalf("diskstats cut at %d: %d rows from %d complete lines", len(b), len(ds), complete)
			}
			for i := range complete {
				if ds[i] != fullDisks[i] {
					t.Fatalf("diskstats cut at %d: row %d %+v, the whole file's %+v", len(b), i, ds[i], fullDisks[i])
				}
			}
		}},
		{"mounts", func(b []byte, complete int) {
			ms, _ := ParseMounts(b)
			if len(ms) < complete || len(ms) > complete+1 {
				t.Fatalf("mounts cut at %d: %d rows from %d complete lines", len(b), len(ms), complete)
			}
			for i := range complete {
				if !reflect.DeepEqual(ms[i], fullMounts[i]) {
					t.Fatalf("mounts cut at %d: row %d %+v, the whole file's %+v", len(b), i, ms[i], fullMounts[i])
				}
			}
		}},
		{"cpuinfo", func(b []byte, _ int) {
			cs := ParseCPUInfo(b)
			if len(cs) > len(fullCPUs) {
				t.Fatalf("cpuinfo cut at %d: %d processors, the whole file %d", len(b), len(cs), len(fullCPUs))
			}
			for i := range max(len(cs)-1, 0) { // all but the one being cut
				if !reflect.DeepEqual(cs[i], fullCPUs[i]) {
					t.Fatalf("cpuinfo cut at %d: processor %d %+v, the whole file's %+v", len(b), i, cs[i], fullCPUs[i])
				}
			}
		}},
	} {
		b := sample(t, c.name)
		for n := range len(b) + 1 {
			c.check(b[:n], bytes.Count(b[:n], []byte("\n")))
		}
	}
}

// TestMalformedSamples reads recorded files with malformed lines: each
// costs its line, counted, and the good lines around it are read.
func TestMalformedSamples(t *testing.T) {
	vm := ParseVmstat(sample(t, "vmstat-malformed"))
	if vm.PgpgIn != 1000 || vm.PgpgOut != 2000 || vm.PswpIn != 3 || vm.PswpOut != 0 || vm.Bad != 4 {
		t.Errorf("vmstat-malformed: %+v, want pgpgin 1000, pgpgout 2000, pswpin 3 and 4 bad lines", vm)
	}
	// "processor : x" is no processor, and the lines after it describe
	// none until the next processor line.
	want := []CPUInfo{{ID: 0, VendorID: "GenuineIntel", ModelName: "Intel(R) Xeon(R) Processor"}, {ID: 2, ModelName: "AMD EPYC"}}
	if cs := ParseCPUInfo(sample(t, "cpuinfo-malformed")); !reflect.DeepEqual(cs, want) {
		t.Errorf("cpuinfo-malformed: %+v, want %+v", cs, want)
	}
	path, params := SplitCmdline(bytes.TrimRight(sample(t, "pid-cmdline"), "\x00"))
	if string(path) != "perl" || string(params) != "-e print 1" {
		t.Errorf("pid-cmdline: path %q, parameters %q", path, params)
	}
}
