const walkthroughView = { redraw() {} };
