package mail

import "strconv"

// RerollFilename is git format-patch -v V's name for patch n, for every V:
// "v1-0001-..." for -v1 too, which Filename leaves as git without -v names
// it (a series read from mail is version 1 when its subjects say none).
func RerollFilename(v, n int, subject string) string {
	return filename(strconv.Itoa(v), n, subject)
}
