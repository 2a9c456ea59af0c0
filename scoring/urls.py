app_name = "scoring"
urlpatterns = []
