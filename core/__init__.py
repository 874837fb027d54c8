"""PE Lab's pure computation: numpy, torch and pandas only, never streamlit.

Pages call into these modules and only arrange widgets and figures around the results.
"""
