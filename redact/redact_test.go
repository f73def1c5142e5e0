package redact_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream/redact"
)

var testKey = []byte("the store's key")

// secret is a secret of a test line: its text as the line holds it, how
// many of its bytes stay (a shape's prefix), and its kind.
type secret struct {
	text string
	keep int
	kind string
}

// maskOf is the mask of a secret without escapes, made from the secret
// itself: its prefix, then '*', eight hex digits of its HMAC under key
// and '*' when ten bytes or more are masked, then '*'.
func maskOf(key []byte, s secret, decoded string) string {
	n := len(s.text) - s.keep
	if n < 10 {
		return s.text[:s.keep] + strings.Repeat("*", n)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(decoded))
	return s.text[:s.keep] + "*" + hex.EncodeToString(m.Sum(nil))[:8] + "*" + strings.Repeat("*", n-10)
}

// decode returns the text of a secret as a JSON string holds it.
func decode(t *testing.T, s string) string {
	t.Helper()
	var out string
	if err := json.Unmarshal([]byte(`"`+s+`"`), &out); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return out
}

var cases = []struct {
	name    string
	line    string
	secrets []secret
}{
	{"aws access key id", `aws configure set aws_access_key_id AKIAZ7Q3XKL0PV7AWC2T`,
		[]secret{{"AKIAZ7Q3XKL0PV7AWC2T", 4, redact.KindAWS}}},
	{"aws session key id", `"AccessKeyId": "ASIAZ7Q3XKL0PV7AWC2T",`,
		[]secret{{"ASIAZ7Q3XKL0PV7AWC2T", 4, redact.KindAWS}}},
	{"aws secret key by name", `AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzZ9kQ4mL1p`,
		[]secret{{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzZ9kQ4mL1p", 0, redact.KindAssignment}}},
	{"google api key", `https://maps.googleapis.com/maps/api/js?key=AIzaSyD3kQ9xLm2Pv7WcT4fYbN8uJ1sHd5EgK0i&v=3`,
		[]secret{{"AIzaSyD3kQ9xLm2Pv7WcT4fYbN8uJ1sHd5EgK0i", 4, redact.KindGoogle}}},
	{"github classic token", `export GITHUB_TOKEN=ghp_R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iO`,
		[]secret{{"ghp_R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iO", 4, redact.KindGitHub}}},
	{"github fine-grained token", `token github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijABCDEFGHIJklmnopqrstuvwxyz0123456789ABCDEFGHIJKL ok`,
		[]secret{{"github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijABCDEFGHIJklmnopqrstuvwxyz0123456789ABCDEFGHIJKL", 11, redact.KindGitHub}}},
	{"agentstream token", `export AGENTSTREAM_API=agst_R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iOzR8nQz3`,
		[]secret{{"agst_R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iOzR8nQz3", 5, redact.KindAgentstream}}},
	{"agentstream share link", `open http://127.0.0.1:8377/sessions/s_1#token=agsl_-8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iOzR8nQ_3 now`,
		[]secret{{"agsl_-8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iOzR8nQ_3", 5, redact.KindAgentstream}}},
	{"gitlab token", `git clone https://oauth2:glpat-Xk9pL2vQzR7mN3bT8wYc@gitlab.com/g/p.git`,
		[]secret{{"glpat-Xk9pL2vQzR7mN3bT8wYc", 6, redact.KindGitLab}}},
	{"slack bot token", `{"text":"SLACK=xoxb-2048192837465-4096384756192-Zk9pL2vQzR7mN3bT8wYcAbCd"}`,
		[]secret{{"xoxb-2048192837465-4096384756192-Zk9pL2vQzR7mN3bT8wYcAbCd", 5, redact.KindSlack}}},
	{"stripe secret key", `stripe.api_key = 'sk_live_51HxQ2kL9pV7aWc2TfYbM5uJ9sHd4EgK1iOzR'`,
		[]secret{{"sk_live_51HxQ2kL9pV7aWc2TfYbM5uJ9sHd4EgK1iOzR", 8, redact.KindStripe}}},
	{"openai project key", `OPENAI_API_KEY=sk-proj-Xk9pL2vQzR7mN3bT8wYcAbCdEfGhIjKlMnOpQrStUvWx_yz0123456789`,
		[]secret{{"sk-proj-Xk9pL2vQzR7mN3bT8wYcAbCdEfGhIjKlMnOpQrStUvWx_yz0123456789", 8, redact.KindOpenAI}}},
	{"openai legacy key", `key: sk-Xk9pL2vQzR7mN3bT8wYcT3BlbkFJAbCdEfGhIjKlMnOpQrSt`,
		[]secret{{"sk-Xk9pL2vQzR7mN3bT8wYcT3BlbkFJAbCdEfGhIjKlMnOpQrSt", 3, redact.KindOpenAI}}},
	{"anthropic key", `{"type":"tool_result","content":"ANTHROPIC_API_KEY=sk-ant-api03-Xk9pL2vQzR7mN3bT8wYcAbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOpQrStUvWxYz01234567-AAAA\n"}`,
		[]secret{{"sk-ant-api03-Xk9pL2vQzR7mN3bT8wYcAbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOpQrStUvWxYz01234567-AAAA", 7, redact.KindAnthropic}}},
	{"hugging face token", `HF_TOKEN=hf_XkpLvQzRmNbTwYcAbCdEfGhIjKlMnOpQrS`,
		[]secret{{"hf_XkpLvQzRmNbTwYcAbCdEfGhIjKlMnOpQrS", 3, redact.KindHuggingFace}}},
	{"npm token", `//registry.npmjs.org/:_authToken=npm_Xk9pL2vQzR7mN3bT8wYcAbCdEfGhIjKlMnOp`,
		[]secret{{"npm_Xk9pL2vQzR7mN3bT8wYcAbCdEfGhIjKlMnOp", 4, redact.KindNPM}}},
	{"jwt", `Cookie: x; curl -d token=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c end`,
		[]secret{{"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", 3, redact.KindJWT}}},
	{"jwt with a short header", `Authorization: Bearer eyJhbGciOiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fw`,
		[]secret{{"eyJhbGciOiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fw", 3, redact.KindJWT}}},
	{"env file in a tool result", `{"content":"DB_HOST=db\nDB_PASSWORD=s3cr3t-pw\nAPI_KEY=abc123\nPWD=/home/dev\nDEBUG=true\n"}`,
		[]secret{{"s3cr3t-pw", 0, redact.KindAssignment}, {"abc123", 0, redact.KindAssignment}}},
	{"quoted env value", `PASSWORD="correct horse battery staple" ./serve`,
		[]secret{{"correct horse battery staple", 0, redact.KindAssignment}}},
	{"json key", `{"username":"dev","password":"hunter22","input_tokens":123}`,
		[]secret{{"hunter22", 0, redact.KindAssignment}}},
	{"json key inside a json string", `{"content":"{\"client_secret\": \"q8Xk9pL2vQ-zR7m\", \"n\": 1}"}`,
		[]secret{{"q8Xk9pL2vQ-zR7m", 0, redact.KindAssignment}}},
	{"camel case key", `const config = { apiKey: "AbC123dEf456", authDomain: "x.firebaseapp.com" };`,
		[]secret{{"AbC123dEf456", 0, redact.KindAssignment}}},
	{"yaml", `  db_password: Xk9pL2vQzR`,
		[]secret{{"Xk9pL2vQzR", 0, redact.KindAssignment}}},
	{"flag", `psql --password=Xk9pL2vQzR7m --host db`,
		[]secret{{"Xk9pL2vQzR7m", 0, redact.KindAssignment}}},
	{"authorization header", `curl -H "Authorization: Bearer Xk9pL2vQzR7mN3bT8wYc" https://api.example.org`,
		[]secret{{"Xk9pL2vQzR7mN3bT8wYc", 0, redact.KindAssignment}}},
	{"authorization json", `{"headers":{"Authorization":"Basic ZGV2OnMzY3IzdA=="}}`,
		[]secret{{"ZGV2OnMzY3IzdA==", 0, redact.KindAssignment}}},
	{"pgpassword", `PGPASSWORD=Xk9pL2vQ psql -h db`,
		[]secret{{"Xk9pL2vQ", 0, redact.KindAssignment}}},
	{"url password", `DATABASE_URL=postgres://admin:Xk9#pL2vQ@db.internal:5432/app`,
		[]secret{{"Xk9#pL2vQ", 0, redact.KindURLPassword}}},
	{"url password with @", `{"cmd":"redis-cli -u redis://:p@ss-w0rd@cache:6379"}`,
		[]secret{{"p@ss-w0rd", 0, redact.KindURLPassword}}},
	{"rule name", `VAULT_ROLE_ID=Xk9pL2vQ`, nil},
}

func TestLine(t *testing.T) {
	r := redact.New(redact.Options{Key: testKey})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.line
			var wantKinds []string
			for _, s := range c.secrets {
				i := strings.Index(want, s.text)
				if i < 0 {
					t.Fatalf("the case's line does not hold %q", s.text)
				}
				dec := s.text
				if strings.HasPrefix(c.line, "{") {
					dec = decode(t, s.text)
				}
				want = want[:i] + maskOf(testKey, s, dec) + want[i+len(s.text):]
				wantKinds = append(wantKinds, s.kind)
			}
			var kinds []string
			for _, m := range r.Find([]byte(c.line)) {
				kinds = append(kinds, m.Kind)
			}
			if diff := cmp.Diff(wantKinds, kinds); diff != "" {
				t.Errorf("Find kinds (-want +got):\n%s", diff)
			}
			got := string(r.Line([]byte(c.line)))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Line (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLeftAlone holds lines that look like secrets to a careless scan and
// are not.
func TestLeftAlone(t *testing.T) {
	r := redact.New(redact.Options{Key: testKey})
	for _, line := range []string{
		`{"type":"result","usage":{"input_tokens":4,"output_tokens":126,"max_tokens":4096},"token_type":"bearer"}`,
		`{"key": "value", "n": 12, "nested": {"a": [1, 2, 3]}}`,
		`password = input("Password: ")  api_key=api_key  token = self.token  secret = os.environ["SECRET"]`,
		`PWD=/home/dev OLDPWD=/tmp`,
		`function login(password: string, token: Token): Promise<void>`,
		`PASSWORD=${DB_PASSWORD} TOKEN=$TOKEN API_KEY=<your-api-key> SECRET="{{ secrets.X }}" TOKEN=xxxxxxxx`,
		`GITHUB_TOKEN=ghp_************************************ password: "********"`,
		`aws_access_key_id = AKIAIOSFODNN7EXAMPLE`,
		`postgres://user:password@localhost:5432/db and postgres://user@localhost and git@github.com:org/repo.git`,
		`{"password": null, "secret": false, "token": 12345678, "api_key": {"type": "string"}}`,
		`"description": "The user's password for the account"`,
		`if a == b && c != d && e <= f { x += 1 }`,
		`sk-learn and sk-this-is-not-a-key-at-all-just-words`,
		`{"signature":"EqQBCkYIBBgCKkBpmp8vLAb2bTgZ9XkKP0v0yQ2lM3N8mZ7r"}`,
		`-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----`,
		`credentials: "include", mode: "cors"`,
	} {
		t.Run(line[:min(len(line), 40)], func(t *testing.T) {
			if got := string(r.Line([]byte(line))); got != line {
				t.Errorf("Line changed a line without a secret:\n got %s\nwant %s", got, line)
			}
		})
	}
}

func TestPrivateKey(t *testing.T) {
	r := redact.New(redact.Options{Key: testKey})
	for _, c := range []struct{ name, line, want string }{
		{"json string",
			`{"t":"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcd\n-----END RSA PRIVATE KEY-----\n","u":1}`,
			// The escapes of the body stay; its other bytes are masked.
			`{"t":"-----BEGIN RSA PRIVATE KEY-----` + maskBody(`\nMIIEpAIBAAKCAQEA1234\nabcd\n`) + `-----END RSA PRIVATE KEY-----\n","u":1}`},
		{"cut by the end of its string",
			`{"t":"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA","u":"-----END OPENSSH PRIVATE KEY-----"}`,
			`{"t":"-----BEGIN OPENSSH PRIVATE KEY-----` + maskBody(`\nb3BlbnNzaC1rZXktdjEAAAAA`) + `","u":"-----END OPENSSH PRIVATE KEY-----"}`},
		{"plain text",
			"-----BEGIN PRIVATE KEY-----MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-----END PRIVATE KEY-----",
			"-----BEGIN PRIVATE KEY-----" + maskBody("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC") + "-----END PRIVATE KEY-----"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The tag is the HMAC of the body as decoded.
			got := string(r.Line([]byte(c.line)))
			tagged := strings.Replace(c.want, "#TAG#TAG##", tagOfBody(t, c.line), 1)
			if diff := cmp.Diff(tagged, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// maskBody is the mask of a PEM body: escapes kept, the first ten other
// bytes a placeholder of the tag (#TAG#TAG##, replaced by tagOfBody), the
// rest '*'.
func maskBody(body string) string {
	var b strings.Builder
	k := 0
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' {
			b.WriteString(body[i : i+2])
			i++
			continue
		}
		if k < 10 {
			b.WriteByte("#TAG#TAG##"[k])
		} else {
			b.WriteByte('*')
		}
		k++
	}
	return b.String()
}

// tagOfBody returns the tag of the PEM body of a line, from the line: '*',
// eight hex digits of the HMAC of the decoded body, '*'.
func tagOfBody(t *testing.T, line string) string {
	t.Helper()
	i := strings.Index(line, "KEY-----") + len("KEY-----")
	rest := line[i:]
	j := strings.Index(rest, "-----END")
	if q := strings.Index(rest, `"`); strings.HasPrefix(line, "{") && q >= 0 && q < j {
		j = q
	}
	body := rest[:j]
	if strings.HasPrefix(line, "{") {
		body = decode(t, body)
	}
	m := hmac.New(sha256.New, testKey)
	m.Write([]byte(body))
	return "*" + hex.EncodeToString(m.Sum(nil))[:8] + "*"
}

func TestRules(t *testing.T) {
	rules, err := redact.ParseRules(strings.NewReader(`
# the team's rules
name vault_role_id
pattern internal tok_[0-9a-f]{16}
pattern grouped sess=([A-Z]{8})
allow hunter22
allow-pattern ^test-
`))
	if err != nil {
		t.Fatal(err)
	}
	r := redact.New(redact.Options{Key: testKey, Rules: rules})
	for _, c := range []struct {
		name    string
		line    string
		secrets []secret
	}{
		{"name", `VAULT_ROLE_ID=Xk9pL2vQ`, []secret{{"Xk9pL2vQ", 0, redact.KindAssignment}}},
		{"name as last words", `MY_VAULT_ROLE_ID=Xk9pL2vQ`, []secret{{"Xk9pL2vQ", 0, redact.KindAssignment}}},
		{"pattern", `id tok_0123456789abcdef ok`, []secret{{"tok_0123456789abcdef", 0, redact.KindRule + "internal"}}},
		{"pattern group", `cookie sess=ABCDEFGH; path=/`, []secret{{"ABCDEFGH", 0, redact.KindRule + "grouped"}}},
		{"allowed value", `{"password":"hunter22"}`, nil},
		{"allowed pattern", `PASSWORD=test-only-value`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := c.line
			for _, s := range c.secrets {
				i := strings.Index(want, s.text)
				want = want[:i] + maskOf(testKey, s, s.text) + want[i+len(s.text):]
			}
			if got := string(r.Line([]byte(c.line))); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	for _, bad := range []string{"name", "pattern x", "pattern x [", "frobnicate x", "allow-pattern ("} {
		if _, err := redact.ParseRules(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseRules(%q) accepted it", bad)
		}
	}
}

func TestNoKey(t *testing.T) {
	r := redact.New(redact.Options{})
	line := `GITHUB_TOKEN=ghp_R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iO`
	want := `GITHUB_TOKEN=ghp_` + strings.Repeat("*", 36)
	if got := string(r.Line([]byte(line))); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestHead(t *testing.T) {
	r := redact.New(redact.Options{Key: testKey})
	for _, c := range []struct {
		name, head string
		cut        secret
		hashed     string // what the tag is of, when not cut.text
	}{
		{"token cut", `{"text":"see ghp_R8nQz3XkL0`, secret{"ghp_R8nQz3XkL0", 4, redact.KindGitHub}, ""},
		{"value cut", `{"text":"DB_PASSWORD=s3cr`, secret{"s3cr", 0, redact.KindAssignment}, ""},
		{"key cut", `{"text":"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIL`, secret{"MHcCAQEEIL", 0, redact.KindPrivateKey},
			"\nMHcCAQEEIL"}, // the body starts with the newline after the header
		{"url cut", `{"text":"postgres://app:s3cr`, secret{"s3cr", 0, redact.KindURLPassword}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			hashed := c.hashed
			if hashed == "" {
				hashed = c.cut.text
			}
			want := strings.TrimSuffix(c.head, c.cut.text) + maskOf(testKey, c.cut, hashed)
			if got := string(r.Head([]byte(c.head))); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// TestReader checks that the stream masks each line as Line does, however
// the bytes arrive and however long the lines are: a line of several MiB
// is masked a window at a time, with secrets placed across the windows'
// edges.
func TestReader(t *testing.T) {
	r := redact.New(redact.Options{Key: testKey})
	var in bytes.Buffer
	for _, c := range cases {
		in.WriteString(c.line + "\n")
	}
	// A long JSON line with secrets every 37 KiB or so, so that some fall
	// on every edge of the windows.
	in.WriteString(`{"type":"tool_result","content":"`)
	for i := 0; in.Len() < 5<<20; i++ {
		in.WriteString(strings.Repeat("lorem ipsum dolor ", 2000+i%7))
		switch i % 3 {
		case 0:
			in.WriteString(`\nDB_PASSWORD=s3cr3t-pw\n`)
		case 1:
			in.WriteString(` ghp_R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iO `)
		case 2:
			in.WriteString(`-----BEGIN RSA PRIVATE KEY-----\n` + strings.Repeat("MIIEpAIBAAKCAQEA", 100) + `\n-----END RSA PRIVATE KEY-----\n`)
		}
	}
	in.WriteString("\"}\r\nlast line without newline PASSWORD=s3cr3t")
	src := in.Bytes()

	var want []byte
	for i, line := range bytes.Split(src, []byte("\n")) {
		if i > 0 {
			want = append(want, '\n')
		}
		want = append(want, r.Line(bytes.Clone(line))...)
	}
	for _, c := range []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"half reads", iotest.HalfReader},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "one byte at a time" {
				src := src[:min(len(src), 256<<10)]
				wantHead := want[:len(src)]
				got, err := io.ReadAll(r.Reader(c.wrap(bytes.NewReader(src))))
				if err != nil {
					t.Fatal(err)
				}
				// The cut last line is masked as a whole line: compare
				// the complete lines.
				k := bytes.LastIndexByte(wantHead, '\n')
				if !bytes.Equal(got[:k], wantHead[:k]) {
					t.Errorf("the stream differs from Line")
				}
				return
			}
			got, err := io.ReadAll(r.Reader(c.wrap(bytes.NewReader(src))))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d bytes out of %d", len(got), len(want))
			}
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && got[i] == want[i] {
					i++
				}
				t.Fatalf("the stream differs from Line at byte %d:\n got %q\nwant %q", i, got[max(0, i-40):min(len(got), i+40)], want[max(0, i-40):min(len(want), i+40)])
			}
			if bytes.Contains(got, []byte("s3cr3t")) || bytes.Contains(got, []byte("R8nQz3XkL0")) || bytes.Contains(got, []byte("MIIEpAIBAAKCAQEA")) {
				t.Errorf("a secret went through")
			}
		})
	}
}

func TestReaderError(t *testing.T) {
	r := redact.New(redact.Options{Key: testKey})
	got, err := io.ReadAll(r.Reader(iotest.TimeoutReader(strings.NewReader("PASSWORD=s3cr3t\nnext"))))
	// TimeoutReader fails its second read: everything before is passed on.
	if err == nil {
		t.Fatal("no error")
	}
	if want := "PASSWORD=******\nnext"; string(got) != want && string(got) != "PASSWORD=******\n" {
		t.Errorf("got %q, want %q", got, want)
	}
}
