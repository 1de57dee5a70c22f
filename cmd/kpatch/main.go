package main

import (
	_ "github.com/bluekeyes/go-gitdiff/gitdiff"
	_ "github.com/go-git/go-git/v5"
	_ "modernc.org/cc/v4"
)

func main() {}
