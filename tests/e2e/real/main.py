import helper
print(helper.VALUE)
