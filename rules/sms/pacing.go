package sms

import "time"

// MaxMessagesPerSecond is the highest pace an owned number may be given:
// a short code's, with room to spare.
const MaxMessagesPerSecond = 1000

// PaceMargin is added to every second of a number's pace: sends are spaced
// so that any messagesPerSecond+1 consecutive ones span at least a second
// and this margin, which absorbs the jitter between the time a send was
// due and the time it reaches the carrier (a busy worker, the network), so
// the carrier counts no more than messagesPerSecond in any second.
const PaceMargin = 50 * time.Millisecond

// SlowedFor is how long a carrier's 429 halves a number's pace, counted
// from the last 429.
const SlowedFor = time.Minute

// SlowedFactor is how much slower a number sends while slowed.
const SlowedFactor = 2

// PaceHold is the longest a send waits, in its activity, for a turn it
// took: a turn due later goes back to the workflow, which sleeps on a
// durable timer until PaceLead before it and sends then, keeping the turn.
// Changing a number's pace voids the turns still held and gives the next
// ones out no earlier than PaceHold from then, when those being waited for
// have gone.
const PaceHold = 4 * time.Second

// PaceLead is how long before its turn a send held back by the workflow
// starts again: it covers the delays of the timer and of the activity's
// dispatch. A send later than that takes a new turn (PaceLate).
const PaceLead = 3 * time.Second

// PaceLate is how late a send may be on its turn and still take it. A
// send late by d shares a second with the turns of the second after it;
// the margin keeps that within the pace while d stays under PaceMargin,
// less what the network adds on the way. A later one (a busy worker, a
// late timer) takes a new turn: its own is lost, a gap in the pace.
const PaceLate = 35 * time.Millisecond

// PaceStep is the time between two consecutive sends from a number paced
// at perSecond messages a second (halved while slowed); zero for a number
// without a pace (perSecond 0).
func PaceStep(perSecond int, slowed bool) time.Duration {
	if perSecond <= 0 {
		return 0
	}
	step := (time.Second + PaceMargin) / time.Duration(perSecond)
	if slowed {
		step *= SlowedFactor
	}
	return step
}

// EstimatedCompletion is when the last of remaining queued sends should
// go from a number paced at perSecond, starting at now: remaining steps
// apart, the first at once, the steps doubled until slowedUntil (zero: not
// slowed). It is false when there is no estimate: no pace (an unpaced
// number sends as fast as the carrier takes them) or nothing left to send.
func EstimatedCompletion(now time.Time, remaining, perSecond int, slowedUntil time.Time) (time.Time, bool) {
	if remaining <= 0 || perSecond <= 0 {
		return time.Time{}, false
	}
	at, steps := now, remaining-1
	if slow := PaceStep(perSecond, true); slowedUntil.After(at) {
		// The sends due before the slowdown ends go at the slowed pace.
		n := min(steps, int((slowedUntil.Sub(at)+slow-1)/slow))
		at, steps = at.Add(time.Duration(n)*slow), steps-n
	}
	return at.Add(time.Duration(steps) * PaceStep(perSecond, false)), true
}
