package manager

import (
	"fmt"
	"strings"
)

// eachParam calls set for each KEY=VALUE of Net-SNMP's -T syntax
// ("key=value,key=value"), with KEY lower-cased and without underscores
// (their_identity and theirIdentity are the same key).
func eachParam(s string, set func(key, value string) error) error {
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("-T %s: want KEY=VALUE", kv)
		}
		if err := set(strings.ToLower(strings.ReplaceAll(k, "_", "")), v); err != nil {
			return err
		}
	}
	return nil
}

// yesNo reads a -T boolean.
func yesNo(key, value string) (bool, error) {
	switch strings.ToLower(value) {
	case "no", "off", "false", "0":
		return false, nil
	case "yes", "on", "true", "1":
		return true, nil
	}
	return false, fmt.Errorf("-T %s=%s: want yes or no", key, value)
}
