package bench

import (
	"context"
	"errors"
)

func runWS(ctx context.Context, env *Env, s *Section) error {
	return errors.New("not implemented yet in this version of tsnmp bench")
}
