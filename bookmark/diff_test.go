package bookmark

import (
	"iter"
	"slices"
	"testing"
	"time"
)

func seq(files ...File) iter.Seq2[File, error] {
	return func(yield func(File, error) bool) {
		for _, f := range files {
			if !yield(f, nil) {
				return
			}
		}
	}
}

func f(path string, size, mtime int64) File { return File{Path: path, Size: size, MTime: mtime} }

func TestDiffExact(t *testing.T) {
	cases := []struct {
		name          string
		listing, rec  []File
		wantNew       []string
		wantModified  []string
		wantUnchanged int64
	}{
		{"empty state", []File{f("a", 1, 1), f("b", 1, 1)}, nil, []string{"a", "b"}, nil, 0},
		{"nothing new", []File{f("a", 1, 1)}, []File{f("a", 1, 1)}, nil, nil, 1},
		{"late file with old mtime", []File{f("a", 1, 100), f("b", 1, 1)}, []File{f("a", 1, 100)}, []string{"b"}, nil, 1},
		{"modified size", []File{f("a", 2, 1)}, []File{f("a", 1, 1)}, nil, []string{"a"}, 0},
		{"modified mtime", []File{f("a", 1, 2)}, []File{f("a", 1, 1)}, nil, []string{"a"}, 0},
		{"deleted files are not new", []File{f("c", 1, 1)}, []File{f("a", 1, 1), f("b", 1, 1), f("c", 1, 1)}, nil, nil, 1},
		{"byte order with separators", []File{f("a-b", 1, 1), f("a/b", 1, 1), f("a0", 1, 1)}, []File{f("a/b", 1, 1)}, []string{"a-b", "a0"}, nil, 1},
		{"interleaved", []File{f("a", 1, 1), f("b", 1, 1), f("c", 1, 1), f("d", 1, 1)}, []File{f("b", 1, 1), f("d", 9, 1), f("e", 1, 1)}, []string{"a", "c"}, []string{"d"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var gotNew, gotMod []string
			unchanged, err := DiffExact(seq(c.listing...), seq(c.rec...), func(ch Change) error {
				if ch.Kind == New {
					gotNew = append(gotNew, ch.File.Path)
				} else {
					gotMod = append(gotMod, ch.File.Path)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gotNew, c.wantNew) || !slices.Equal(gotMod, c.wantModified) || unchanged != c.wantUnchanged {
				t.Errorf("got new %v modified %v unchanged %d, want new %v modified %v unchanged %d",
					gotNew, gotMod, unchanged, c.wantNew, c.wantModified, c.wantUnchanged)
			}
		})
	}
}

func TestDiffExactRejectsUnsortedInput(t *testing.T) {
	_, err := DiffExact(seq(f("b", 1, 1), f("a", 1, 1)), seq(), func(Change) error { return nil })
	if err == nil {
		t.Fatal("unsorted listing: got nil error, want one")
	}
	_, err = DiffExact(seq(f("z", 1, 1)), seq(f("b", 1, 1), f("a", 1, 1)), func(Change) error { return nil })
	if err == nil {
		t.Fatal("unsorted records: got nil error, want one")
	}
}

func TestETagIdentity(t *testing.T) {
	a := File{Path: "k", Size: 1, MTime: 1, ETag: "x"}
	if b := (File{Path: "k", Size: 1, MTime: 1, ETag: "y"}); a.SameIdentity(b) {
		t.Error("different ETags: got same identity")
	}
	if b := (File{Path: "k", Size: 1, MTime: 1}); !a.SameIdentity(b) {
		t.Error("one side without ETag: got different identity")
	}
}

func TestLimit(t *testing.T) {
	files := []File{f("c", 10, 3), f("a", 10, 1), f("b", 10, 2), f("d", 10, 3)}
	cases := []struct {
		name string
		b    Bounds
		want []string
	}{
		{"no bounds, oldest first, ties by path", Bounds{}, []string{"a", "b", "c", "d"}},
		{"bounded files", Bounds{Files: 2}, []string{"a", "b"}},
		{"bounded size", Bounds{Bytes: 25}, []string{"a", "b"}},
		{"always progress", Bounds{Bytes: 1}, []string{"a"}},
	}
	for _, c := range cases {
		take, deferred := Limit(slices.Clone(files), c.b)
		var got []string
		for _, f := range take {
			got = append(got, f.Path)
		}
		if !slices.Equal(got, c.want) || len(take)+len(deferred) != len(files) {
			t.Errorf("%s: got %v (+%d deferred), want %v", c.name, got, len(deferred), c.want)
		}
	}
}

func TestTimestampTracking(t *testing.T) {
	band := int64(15 * time.Minute)
	st := SourceState{}
	take := []File{f("a", 1, 100*band), f("b", 1, 100*band)}
	st = AdvanceTimestamp(st, time.Duration(band), take, time.Unix(0, 1000*band))
	if st.HighWater != 100*band || len(st.Band) != 2 {
		t.Fatalf("after first run: high water %d band %d, want %d and 2", st.HighWater, len(st.Band), 100*band)
	}
	ix := NewBandIndex(st)
	cases := []struct {
		file File
		want bool
	}{
		{f("a", 1, 100*band), false},        // already read
		{f("c", 1, 100*band), true},         // same second as the mark, not yet read
		{f("d", 1, 100*band-band/2), true},  // within the band: a late listing caught
		{f("e", 1, 100*band-2*band), false}, // older than the band: Glue's known miss
		{f("a", 2, 100*band+1), true},       // rewritten later
		{f("f", 1, 100*band+int64(time.Second)), true},
	}
	for _, c := range cases {
		if got := ix.Selects(st, time.Duration(band), c.file); got != c.want {
			t.Errorf("%+v: got %v, want %v", c.file, got, c.want)
		}
	}
	// Deferred by max_files_in_band: the tail shares the last mtime and is still read next time.
	now := time.Unix(0, 200*band)
	cands := []File{f("x1", 1, 200*band-1), f("x2", 1, 200*band-1), f("x3", 1, 200*band-1)}
	tk, def := Limit(cands, Bounds{InBand: 2, Band: time.Duration(band), Now: now})
	if len(tk) != 2 || len(def) != 1 {
		t.Fatalf("in-band cap: took %d deferred %d, want 2 and 1", len(tk), len(def))
	}
	st2 := AdvanceTimestamp(SourceState{}, time.Duration(band), tk, now)
	if !NewBandIndex(st2).Selects(st2, time.Duration(band), def[0]) {
		t.Error("a file deferred by max_files_in_band is not read by the next run")
	}
}

// TestTimestampClock: runs of timestamp tracking, each listing at its own
// time, over files some of which are from the future. Every file is read
// exactly once, and a file from the future neither hides the files that
// land after it nor is read twice once its time comes.
func TestTimestampClock(t *testing.T) {
	const band = 15 * time.Minute
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	type run struct {
		listedAt time.Duration // after t0
		files    []File        // listed
		want     []string      // read
	}
	cases := []struct {
		name string
		runs []run
	}{
		{"a file a day ahead does not hide the next day's files", []run{
			{0, []File{f("a", 1, at(-time.Hour)), f("ahead", 1, at(24*time.Hour))}, []string{"a", "ahead"}},
			{time.Hour, []File{f("a", 1, at(-time.Hour)), f("ahead", 1, at(24*time.Hour)), f("b", 1, at(30*time.Minute))}, []string{"b"}},
			{2 * time.Hour, []File{f("ahead", 1, at(24*time.Hour)), f("b", 1, at(30*time.Minute)), f("c", 1, at(2*time.Hour-time.Second))}, []string{"c"}},
			// The next day: the file's time has come and gone; it is not read again.
			{25 * time.Hour, []File{f("ahead", 1, at(24*time.Hour)), f("d", 1, at(25*time.Hour-5*time.Minute))}, []string{"d"}},
			{26 * time.Hour, []File{f("ahead", 1, at(24*time.Hour)), f("d", 1, at(25*time.Hour-5*time.Minute)), f("e", 1, at(26*time.Hour))}, []string{"e"}},
			{27 * time.Hour, []File{f("ahead", 1, at(24*time.Hour)), f("e", 1, at(26*time.Hour))}, nil},
		}},
		{"files within the skew of the listing", []run{
			{0, []File{f("a", 1, at(-10*time.Second)), f("b", 1, at(30*time.Second))}, []string{"a", "b"}},
			{time.Minute, []File{f("a", 1, at(-10*time.Second)), f("b", 1, at(30*time.Second)), f("c", 1, at(20*time.Second))}, []string{"c"}},
			{20 * time.Minute, []File{f("a", 1, at(-10*time.Second)), f("b", 1, at(30*time.Second)), f("c", 1, at(20*time.Second))}, nil},
		}},
		{"a future file rewritten with a present mtime is read again", []run{
			{0, []File{f("x", 1, at(48*time.Hour))}, []string{"x"}},
			{time.Hour, []File{f("x", 2, at(time.Hour))}, []string{"x"}},
			{2 * time.Hour, []File{f("x", 2, at(time.Hour))}, nil},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var st SourceState
			for i, r := range c.runs {
				listedAt := t0.Add(r.listedAt)
				ix := NewBandIndex(st)
				var taken []File
				var got []string
				for _, file := range r.files {
					if ix.Selects(st, band, file) {
						taken = append(taken, file)
						got = append(got, file.Path)
					}
				}
				if !slices.Equal(got, r.want) {
					t.Fatalf("run %d (listing at t0+%v): read %v, want %v (mark at t0 + %v)", i+1, r.listedAt, got, r.want, time.Unix(0, st.HighWater).Sub(t0))
				}
				st = AdvanceTimestamp(st, band, taken, listedAt)
				if limit := listedAt.Add(-ClockSkew).UnixNano(); len(taken) > 0 && st.HighWater > limit {
					t.Fatalf("run %d: mark at t0 + %v, past the listing time minus the skew", i+1, time.Unix(0, st.HighWater).Sub(t0))
				}
			}
		})
	}
}

func TestTimestampMarkNeverMovesBack(t *testing.T) {
	// A mark already in the future (a state written before the clamp, or a
	// clock set back) stays: lowering it would re-read files that left the
	// band.
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := SourceState{HighWater: t0.Add(24 * time.Hour).UnixNano()}
	st = AdvanceTimestamp(st, 15*time.Minute, []File{f("a", 1, t0.UnixNano())}, t0)
	if want := t0.Add(24 * time.Hour).UnixNano(); st.HighWater != want {
		t.Errorf("mark moved from t0 + 24h to t0 + %v, want it kept", time.Unix(0, st.HighWater).Sub(t0))
	}
}

func TestFuture(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	files := []File{
		f("past", 1, t0.Add(-time.Hour).UnixNano()),
		f("now", 1, t0.UnixNano()),
		f("within-skew", 1, t0.Add(ClockSkew).UnixNano()),
		f("just-past-skew", 1, t0.Add(ClockSkew+time.Second).UnixNano()),
		f("tomorrow", 1, t0.Add(24*time.Hour).UnixNano()),
	}
	var got []string
	for _, file := range Future(files, t0) {
		got = append(got, file.Path)
	}
	if want := []string{"just-past-skew", "tomorrow"}; !slices.Equal(got, want) {
		t.Errorf("Future: got %v, want %v", got, want)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeEnable, "enable": ModeEnable, "job-bookmark-enable": ModeEnable,
		"disable": ModeDisable, "job-bookmark-disable": ModeDisable, "pause": ModePause, "JOB-BOOKMARK-PAUSE": ModePause} {
		got, err := ParseMode(in)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("job-bookmark-maybe"); err == nil {
		t.Error("ParseMode(job-bookmark-maybe): want error")
	}
}
