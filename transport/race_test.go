//go:build race

package transport

// raceEnabled: the race detector is on (its threads and checks add
// thread runs; TestUDPLoneRequestsLeaveMonitorAsleep).
const raceEnabled = true
