package config

import (
	"errors"
	"fmt"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// PolicyOptions are what Policy needs besides the configuration.
type PolicyOptions struct {
	// USM is the agent's User-based Security Model. Policy replaces its
	// users with the configured ones, localized to its engine ID, and
	// puts it in the policy for SNMPv3.
	USM *usm.USM
	// MergeUsers, if set, sees the configured users before they are
	// installed and may add to them (tsnmpd adds the users kept in its
	// state directory). An error stops the load.
	MergeUsers func(*usm.UserTable) error
	// Users, if set, receives the users (Replace) instead of USM's own
	// table, whose users then stay as they are, and the policy's USM is
	// USM.WithUsers(Users): the users are installed with the policy, in
	// the same step as its access control and communities (tsnmpd, once
	// a reload has opened every new listen address).
	Users *usm.UserTable
}

// Policy builds the agent.Policy the configuration describes: the
// community table, VACM, the limits and the User-based Security Model
// with the configured users. It is the one way an agent is assembled from
// a configuration (tsnmpd, tests, benchmarks); callers add further
// security models (TSM) to SecurityModels. Nothing is changed when it
// fails, except what MergeUsers does.
func (c *Config) Policy(o PolicyOptions) (*agent.Policy, error) {
	if o.USM == nil {
		return nil, errors.New("config: Policy needs the agent's USM")
	}
	b, err := c.build()
	if err != nil {
		return nil, err
	}
	users, err := c.BuildUSMUsers(o.USM.EngineID())
	if err != nil {
		return nil, err
	}
	if o.MergeUsers != nil {
		if err := o.MergeUsers(users); err != nil {
			return nil, fmt.Errorf("USM users: %w", err)
		}
	}
	m := o.USM
	if o.Users != nil {
		o.Users.Replace(users)
		m = o.USM.WithUsers(o.Users)
	} else {
		o.USM.Users().Replace(users)
	}
	r := c.Limits.UDPResponseRate
	return &agent.Policy{
		Communities:      b.communities,
		Access:           agent.VACMAccess{VACM: b.vacm},
		MaxResponse:      c.Limits.MaxResponseSize,
		MaxRepetitions:   c.Limits.MaxRepetitions,
		MaxBulkResponses: c.Limits.MaxGetbulkResponses,
		RateLimit: agent.NewRateLimiter(agent.RateLimitConfig{Rate: r.Rate, Burst: r.Burst, Slip: r.Slip,
			IPv4Prefix: r.IPv4Prefix, IPv6Prefix: r.IPv6Prefix}),
		SecurityModels: map[snmp.SecurityModel]security.Model{snmp.SecurityModelUSM: m},
	}, nil
}
