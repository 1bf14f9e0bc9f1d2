package exporter

import (
	"fmt"
	"strings"
	"time"
)

// strftimeLayout maps strftime conversions to Go layout elements.
var strftimeLayout = map[byte]string{
	'Y': "2006", 'y': "06", 'm': "01", 'd': "02", 'e': "_2", 'H': "15", 'I': "03", 'M': "04",
	'S': "05", 'p': "PM", 'b': "Jan", 'h': "Jan", 'B': "January", 'a': "Mon", 'A': "Monday",
	'z': "-0700", 'Z': "MST", 'j': "002", 'f': "000000", '%': "%",
	'F': "2006-01-02", 'T': "15:04:05", 'D': "01/02/06", 'R': "15:04",
}

// parseStrftime parses s by a strftime pattern (datetime_pattern) into
// Unix seconds.
func parseStrftime(s, pattern string) (float64, error) {
	var layout strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 == len(pattern) {
			layout.WriteByte(c)
			continue
		}
		i++
		l, ok := strftimeLayout[pattern[i]]
		if !ok {
			return 0, fmt.Errorf("datetime_pattern %q: %%%c not supported", pattern, pattern[i])
		}
		layout.WriteString(l)
	}
	t, err := time.Parse(layout.String(), s)
	if err != nil {
		return 0, err
	}
	return float64(t.Unix()), nil
}
