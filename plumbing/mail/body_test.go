package mail

import (
	netmail "net/mail"
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	tests := []struct {
		name, header, body string
		encoded            bool
		want, err          string
	}{
		{"plain", "Content-Type: text/plain", "a b\r\nc\n", false, "a b\nc\n", ""},
		{"quoted-printable", "Content-Transfer-Encoding: quoted-printable", "a=20b=\n c=3D\n", true, "a b c=\n", ""},
		{"base64 over lines", "Content-Transfer-Encoding: BASE64", "YSBi\nCmM9\nCg==\n", true, "a b\nc=\n", ""},
		{"multipart, text first", "Content-Type: multipart/mixed; boundary=x",
			"--x\nContent-Type: text/plain\n\npatch\n--x\nContent-Type: application/octet-stream\n\nbin\n--x--\n", true, "patch\n", ""},
		{"multipart, text second", "Content-Type: multipart/mixed; boundary=x",
			"--x\nContent-Type: text/html\n\n<p>\n--x\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\nYQo=\n--x--\n", true, "a\n", ""},
		{"multipart, diff attached", "Content-Type: multipart/mixed; boundary=x",
			"--x\nContent-Type: text/plain\n\nmsg\n---\n--x\nContent-Type: text/x-patch\nContent-Disposition: attachment; filename=a.patch\n\ndiff\n--x--\n", true, "msg\n---\ndiff\n", ""},
		{"multipart, .patch as octet-stream", "Content-Type: multipart/mixed; boundary=x",
			"--x\nContent-Type: text/plain\n\nmsg\n--x\nContent-Type: application/octet-stream; name=a.patch\nContent-Transfer-Encoding: base64\n\nZGlmZgo=\n--x--\n", true, "msg\ndiff\n", ""},
		{"multipart/signed, signature left out", "Content-Type: multipart/signed; boundary=x; protocol=\"application/pgp-signature\"",
			"--x\nContent-Type: text/plain\n\nmsg\n--x\nContent-Type: application/pgp-signature\n\n-----BEGIN PGP SIGNATURE-----\n--x--\n", true, "msg\n", ""},
		{"ISO-8859-1", "Content-Type: text/plain; charset=ISO-8859-1", "Jos\xe9\n", true, "José\n", ""},
		{"ISO-8859-1 quoted-printable", "Content-Type: text/plain; charset=latin1\nContent-Transfer-Encoding: quoted-printable", "Jos=E9\n", true, "José\n", ""},
		{"ISO-8859-1 declared, UTF-8 given", "Content-Type: text/plain; charset=iso-8859-1", "José\n", true, "José\n", ""},
		{"other charset left alone", "Content-Type: text/plain; charset=KOI8-R", "\xf0\n", false, "\xf0\n", ""},
		{"multipart without text", "Content-Type: multipart/mixed; boundary=x",
			"--x\nContent-Type: text/html\n\n<p>\n--x--\n", true, "", "no text/plain part"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg, err := netmail.ReadMessage(strings.NewReader(tc.header + "\n\n" + tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := bodyEncoded(msg.Header); got != tc.encoded {
				t.Errorf("Encoded = %v, want %v", got, tc.encoded)
			}
			got, err := bodyText(msg.Header, msg.Body)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Text = %q, want %q", got, tc.want)
			}
		})
	}
}
