package mib

// RowStatus values (RFC 2579), for the tables whose rows managers create
// and destroy.
const (
	RowActive        = 1
	RowNotInService  = 2
	RowNotReady      = 3
	RowCreateAndGo   = 4
	RowCreateAndWait = 5
	RowDestroy       = 6
)
