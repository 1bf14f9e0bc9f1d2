package tcpudp

// ownerCounts returns the work of m's socket-owner scans.
func ownerCounts(m *MIB) ownerStats { return m.owner.counts() }
