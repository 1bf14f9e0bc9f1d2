package smi

// IndexArcs breaks the instance index rest of a column or row n down by
// the INDEX clause of its row, as IndexParts does, but gives each INDEX
// object's sub-identifiers rather than its text: for OCTET STRING
// indexes the bytes alone, without the length arc of a counted string.
// It returns false where IndexParts does.
func IndexArcs(n *Node, rest []uint32) ([][]uint32, bool) {
	parts, ok := IndexParts(n, rest)
	if !ok {
		return nil, false
	}
	row := rowOf(n)
	arcs := make([][]uint32, 0, len(parts))
	for k, in := range row.index {
		if len(rest) == 0 {
			return nil, false
		}
		last := k == len(row.index)-1
		l := 1
		skip := 0
		switch in.Base {
		case BaseOctetString:
			switch {
			case last && row.implied:
				l = len(rest)
			case in.fixed > 0:
				l = in.fixed
			default:
				l, skip = int(rest[0])+1, 1
			}
		case BaseObjectIdentifier:
			if last && row.implied {
				l = len(rest)
			} else {
				l = int(rest[0]) + 1
			}
		case BaseIPAddress:
			l = 4
			if in.TC == "NetworkAddress" {
				l = 5
			}
		}
		if l > len(rest) {
			return nil, false
		}
		arcs = append(arcs, rest[skip:l])
		rest = rest[l:]
	}
	return arcs, len(rest) == 0 && len(arcs) == len(parts)
}
