"""Figure builders: functions that take arrays and return `plotly.graph_objects.Figure`.

One module per room of the app (encoding, similarity, attention, fault lab). They compute nothing of
their own beyond layout, so a figure always shows exactly the arrays a page passed in.
"""
