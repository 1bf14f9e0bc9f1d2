package transport

import "github.com/tsnmp/tsnmp/internal/connset"

func parkedCount() int { return connset.Parked() }
