// Package look is the shared look of inflight's screens: the styles, the
// cells of the list's last column, the formatting of durations and states,
// and the frame filter every screen's output passes before it reaches the
// terminal. Screens import it; it imports no screen.
package look
