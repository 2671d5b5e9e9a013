print("mockble")
