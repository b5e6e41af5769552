// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// tests/data/classify.tsv, the classifier table shared by C, Go and
// Python: UTF-8, '#' comments and blank lines ignored, the first other
// line a header, tab-separated, columns read by header name.
type tableRow struct {
	line int
	col  map[string]string
}

func readTable(t *testing.T) []tableRow {
	fn := os.Getenv("PEERCGROUP_CLASSIFY_TSV")
	if fn == "" {
		fn = projectFile(t, "tests/data/classify.tsv")
	}
	return readTableFile(t, fn)
}

func readTableFile(t *testing.T, fn string) []tableRow {
	f, err := os.Open(fn)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var header []string
	var rows []tableRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cells := strings.Split(line, "\t")
		if header == nil {
			header = cells
			continue
		}
		if len(cells) != len(header) {
			t.Fatalf("%s:%d: %d columns, header has %d", fn, n, len(cells), len(header))
		}
		r := tableRow{n, map[string]string{}}
		for i, h := range header {
			r.col[h] = cells[i]
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

var escape = regexp.MustCompile(`\\(\\|t|n|x[0-9A-Fa-f]{2})`)

// unescape undoes the table's C escapes: \\ \t \n \xNN.
func unescape(s string) string {
	return escape.ReplaceAllStringFunc(s, func(m string) string {
		switch m[1] {
		case '\\':
			return "\\"
		case 't':
			return "\t"
		case 'n':
			return "\n"
		}
		v, _ := strconv.ParseUint(m[2:], 16, 8)
		return string([]byte{byte(v)})
	})
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// columns renders a classification as the table's columns.
func columns(path string) map[string]string {
	c, err := ClassifyPath(path, InitialNamespace) // the table's view
	if err != nil {
		if !errors.Is(err, ErrInvalidPath) || !errors.Is(err, unix.EINVAL) {
			return map[string]string{"valid": "error " + err.Error()}
		}
		if c.Runtime != Unknown || c.UID != -1 || c.ID != "" {
			return map[string]string{"valid": "no, but a partial answer"}
		}
		return map[string]string{"valid": "no"}
	}
	return map[string]string{
		"valid":     "yes",
		"runtime":   c.Runtime.String(),
		"id":        dash(c.ID),
		"pod":       dash(c.Pod),
		"qos":       dash(c.QoS),
		"uid":       strconv.FormatInt(c.UID, 10),
		"app":       dash(c.App),
		"launcher":  dash(c.Launcher),
		"up":        strconv.Itoa(c.Up),
		"flags":     c.Flags.String(),
		"unit":      dash(c.Unit),
		"user_unit": dash(c.UserUnit),
	}
}

// sortedFlags: the table lists flags in any order.
func sortedFlags(s string) string {
	f := strings.Split(s, ",")
	sort.Strings(f)
	return strings.Join(f, ",")
}

func TestClassifyParity(t *testing.T) {
	rows := readTable(t)
	if len(rows) < 50 {
		t.Fatalf("only %d rows in the table", len(rows))
	}
	checkRows(t, rows, false)
}

// TestClassifyDifferential: the C classifier's answers for generated
// paths (bindings/tests/classify-dump.c; make check-bindings), where every
// string column is escaped.
func TestClassifyDifferential(t *testing.T) {
	fn := os.Getenv("PEERCGROUP_CLASSIFY_DIFF")
	if fn == "" {
		t.Skip("make check-bindings passes PEERCGROUP_CLASSIFY_DIFF")
	}
	rows := readTableFile(t, fn)
	if len(rows) < 1000 {
		t.Fatalf("only %d rows in %s", len(rows), fn)
	}
	checkRows(t, rows, true)
}

func checkRows(t *testing.T, rows []tableRow, allEscaped bool) {
	bad := 0
	for _, r := range rows {
		if bad > 20 {
			t.Fatal("more than 20 rows differ")
		}
		path := unescape(r.col["path"]) // only the path column is escaped
		got := columns(path)
		if got["valid"] != r.col["valid"] {
			t.Errorf("line %d %q: valid %s, table says %s", r.line, path, got["valid"], r.col["valid"])
			bad++
			continue
		}
		if got["valid"] == "no" {
			continue
		}
		differs := false
		for col, want := range r.col {
			if col == "path" || col == "valid" || col == "source" {
				continue
			}
			if allEscaped && col != "runtime" && col != "flags" && col != "uid" && col != "up" {
				want = unescape(want)
			}
			g, ok := got[col]
			if col == "flags" {
				g, want = sortedFlags(g), sortedFlags(want)
			}
			if !ok {
				t.Errorf("line %d: the Go classifier has no column %q", r.line, col)
				differs = true
			} else if g != want {
				t.Errorf("line %d %q: %s = %q, table says %q", r.line, path, col, g, want)
				differs = true
			}
		}
		if differs {
			bad++
		}
	}
}

func TestClassifyNamespaces(t *testing.T) {
	if c, _ := ClassifyPath("/", InitialNamespace); c.Runtime != Host || c.Flags != 0 {
		t.Errorf("/ from the initial namespace: %v %v", c.Runtime, c.Flags)
	}
	if c, _ := ClassifyPath("/", ChildNamespace); c.Runtime != Unknown || c.Flags != FlagNamespaced {
		t.Errorf("/ from a child namespace: %v %v", c.Runtime, c.Flags)
	}
	if _, err := ClassifyPath("/", Namespace(7)); !errors.Is(err, unix.EINVAL) {
		t.Errorf("bad namespace: %v", err)
	}
	// Classify is ClassifyPath in the caller's namespace without the error.
	if c := Classify("a//b"); c.Runtime != Unknown || c.UID != -1 {
		t.Errorf("Classify of an invalid path: %+v", c)
	}
}

func TestRuntimeNames(t *testing.T) {
	if Runtime(-1).String() != "unknown" || runtimeCount.String() != "unknown" || CRIO.String() != "cri-o" {
		t.Error("runtime names")
	}
	if got := fmt.Sprint(FlagConmon | FlagRootless | FlagNamespaced); got != "conmon,rootless,namespaced" {
		t.Errorf("flags %q", got)
	}
}
