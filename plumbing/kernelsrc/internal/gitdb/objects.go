package gitdb

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// CommitInfo is what kpatch needs of a commit: its tree and parents.
type CommitInfo struct {
	Tree    Hash
	Parents []Hash
}

// ParseCommit parses a commit object's header.
func ParseCommit(data []byte) (CommitInfo, error) {
	var c CommitInfo
	first := true
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			break // the message follows
		}
		key, val, _ := bytes.Cut(line, []byte(" "))
		switch {
		case first:
			h, ok := ParseHash(string(val))
			if string(key) != "tree" || !ok {
				return c, errors.New("malformed commit: no tree line first")
			}
			c.Tree = h
			first = false
		case string(key) == "parent":
			h, ok := ParseHash(string(val))
			if !ok {
				return c, fmt.Errorf("malformed commit: parent %.50q", val)
			}
			c.Parents = append(c.Parents, h)
		}
	}
	if first {
		return c, errors.New("malformed commit: empty")
	}
	return c, nil
}

// ParseTag returns the object a tag points to and that object's type.
func ParseTag(data []byte) (Hash, Type, error) {
	var obj Hash
	var typ Type
	var haveObj, haveType bool
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			break
		}
		key, val, _ := bytes.Cut(line, []byte(" "))
		switch string(key) {
		case "object":
			obj, haveObj = ParseHash(string(val))
		case "type":
			typ, haveType = typeByName(string(val))
		}
	}
	if !haveObj || !haveType {
		return obj, typ, errors.New("malformed tag: no object or type line")
	}
	return obj, typ, nil
}

// Entry is one entry of a tree object.
type Entry struct {
	Mode uint32 // git's mode: 0o40000 a directory, 0o100644 a file, ...
	Name string
	Hash Hash
}

// IsDir reports whether the entry is a directory (a tree).
func (e Entry) IsDir() bool { return e.Mode == 0o40000 }

// ParseTree parses a tree object into its entries, in git's order.
func ParseTree(data []byte) ([]Entry, error) {
	var out []Entry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return nil, errors.New("malformed tree entry")
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("malformed tree entry mode %q", data[:sp])
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul <= 0 || nul+21 > len(data) {
			return nil, errors.New("malformed tree entry")
		}
		e := Entry{Mode: uint32(mode), Name: string(data[:nul])}
		copy(e.Hash[:], data[nul+1:nul+21])
		data = data[nul+21:]
		out = append(out, e)
	}
	return out, nil
}
