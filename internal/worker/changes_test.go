package worker

import (
	"slices"
	"testing"
)

func TestMarkingChangedTargetsNeverBlocksAndGathersEachNameOnce(t *testing.T) {
	c := NewChanges()
	// Nobody reads: a worker marking thousands of times must not block.
	for i := 0; i < 10000; i++ {
		c.Mark("team-b/live", "team-a/live")
	}
	select {
	case <-c.Ready():
	default:
		t.Fatal("no signal after Mark")
	}
	if got, want := c.Take(), []string{"team-a/live", "team-b/live"}; !slices.Equal(got, want) {
		t.Fatalf("Take = %q, want %q", got, want)
	}
	if got := c.Take(); len(got) != 0 {
		t.Fatalf("a second Take returned %q", got)
	}
	var none *Changes
	none.Mark("ignored") // a worker without a collector
}
