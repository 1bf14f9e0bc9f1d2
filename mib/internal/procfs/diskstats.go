package procfs

import "math"

// DiskStat is one line of /proc/diskstats.
type DiskStat struct {
	Major, Minor uint64
	Name         string
	Reads        uint64 // completed reads
	ReadSectors  uint64 // 512-byte sectors read
	Writes       uint64
	WriteSectors uint64
	IOTicks      uint64 // ms spent doing I/O
}

// ParseDiskstats reads /proc/diskstats. A line with fewer than 7 fields or
// a non-number is dropped (counted in bad). Lines with 7 fields are the
// short partition form of old kernels.
func ParseDiskstats(b []byte) (ds []DiskStat, bad int) {
	var f [][]byte
	lines(b, func(line []byte) {
		f = fields(line, f)
		if len(f) == 0 {
			return
		}
		if len(f) < 7 {
			bad++
			return
		}
		var n [16]uint64
		cnt := 0
		for i := range f {
			if i == 2 {
				continue
			}
			v, ok := atou(f[i])
			if !ok {
				bad++
				return
			}
			if cnt < len(n) {
				n[cnt] = v
				cnt++
			}
		}
		d := DiskStat{Major: n[0], Minor: n[1], Name: string(f[2])}
		if len(f) == 7 { // major minor name rio rsect wio wsect
			d.Reads, d.ReadSectors, d.Writes, d.WriteSectors = n[2], n[3], n[4], n[5]
		} else {
			if len(f) < 14 {
				bad++
				return
			}
			// rio rmerge rsect ruse wio wmerge wsect wuse running use aveq
			d.Reads, d.ReadSectors, d.Writes, d.WriteSectors, d.IOTicks = n[2], n[4], n[6], n[8], n[11]
		}
		ds = append(ds, d)
	})
	return ds, bad
}

// DiskLoad holds a device's exponentially damped busy percentages over 1,
// 5 and 15 minutes, updated from successive diskstats readings as the
// system load average is.
type DiskLoad struct {
	LA      [3]float64
	lastUse uint64
}

// update folds in busy ms over interval seconds.
func (l *DiskLoad) update(use uint64, seconds float64) {
	if seconds <= 0 {
		return
	}
	busy := float64(Sub(use, l.lastUse)) * 100 / (seconds * 1000)
	for i, mins := range [3]float64{1, 5, 15} {
		e := math.Exp(-seconds / (mins * 60))
		l.LA[i] = l.LA[i]*e + busy*(1-e)
	}
	l.lastUse = use
}
