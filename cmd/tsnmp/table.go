package main

func (a *app) table(ops []string) int {
	a.errorf("%s: not implemented\n", a.tool)
	return 1
}
